// "Delete X?" in a dialog: the gateway's refusal (409: still used by ...) is shown in it.
import type { ComponentChildren } from 'preact';
import { Button, ErrorBox, Modal } from '../../ui/components.tsx';
import { useAction } from '../../lib/hooks.ts';

export function ConfirmDelete(props: {
  what: string;
  /** The dialog's name; default `Delete <what>?`. */
  title?: string;
  /** The confirm button's name; default Delete. */
  confirmLabel?: string;
  /** What deleting does; default that it cannot be undone. */
  children?: ComponentChildren;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  onDone: () => void;
}) {
  // Succeeded or not is whether it threw; the gateway's answer body does not matter here.
  const action = useAction(async () => {
    await props.onConfirm();
    return true as const;
  });
  const confirm = async () => {
    if (await action.run()) props.onDone();
  };
  return (
    <Modal title={props.title ?? `Delete ${props.what}?`} onClose={props.onClose}>
      <div class="stack">
        <p>{props.children ?? 'This cannot be undone.'}</p>
        <ErrorBox error={action.error} />
        <div class="row">
          <Button kind="danger" onClick={() => void confirm()} disabled={action.busy}>
            {props.confirmLabel ?? 'Delete'}
          </Button>
          <Button onClick={props.onClose}>Cancel</Button>
        </div>
      </div>
    </Modal>
  );
}
