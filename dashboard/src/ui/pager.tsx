// Previous / next over an offset-paged list; hidden while everything fits on one page.
import { Button } from './components.tsx';

export function Pager(props: { label: string; offset: number; pageSize: number; total: number; onOffset: (offset: number) => void }) {
  const { offset, pageSize, total } = props;
  if (total <= pageSize) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      <Button onClick={() => props.onOffset(Math.max(0, offset - pageSize))} disabled={offset === 0}>
        Previous
      </Button>
      <span>
        {offset + 1}–{Math.min(offset + pageSize, total)} of {total}
      </span>
      <Button onClick={() => props.onOffset(offset + pageSize)} disabled={offset + pageSize >= total}>
        Next
      </Button>
    </nav>
  );
}
