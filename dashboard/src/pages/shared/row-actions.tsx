// Edit and Delete buttons of a table row (clicks stay off the row's own click).
import { Button, type Column } from '../../ui/components.tsx';

interface Actions {
  /** What the buttons' accessible names say they act on ("Edit budget b1"). */
  name: string;
  onEdit: () => void;
  onDelete: () => void;
}

export function RowActions(props: Actions) {
  return (
    <div class="row nowrap" onClick={(e) => e.stopPropagation()} onKeyDown={(e) => e.stopPropagation()}>
      <Button onClick={props.onEdit} label={`Edit ${props.name}`}>
        Edit
      </Button>
      <Button kind="danger" onClick={props.onDelete} label={`Delete ${props.name}`}>
        Delete
      </Button>
    </div>
  );
}

/** The Actions column of an editable table; none in read-only mode. */
export function actionsColumn<T>(readOnly: boolean, of: (row: T) => Actions): Column<T>[] {
  return readOnly ? [] : [{ label: 'Actions', render: (row) => <RowActions {...of(row)} /> }];
}
