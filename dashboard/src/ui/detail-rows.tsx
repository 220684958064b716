// Rows of a hand-built table whose rows open a detail row beneath them (deliveries, MCP tool calls).
import type { ComponentChildren } from 'preact';

/** The single row of a table with nothing to show. */
export function EmptyRow(props: { colSpan: number; children: ComponentChildren }) {
  return (
    <tr>
      <td colSpan={props.colSpan} class="empty">
        {props.children}
      </td>
    </tr>
  );
}

/** The full-width row under an opened row. */
export function DetailRow(props: { colSpan: number; children: ComponentChildren }) {
  return (
    <tr class="detail-row">
      <td colSpan={props.colSpan}>{props.children}</td>
    </tr>
  );
}
