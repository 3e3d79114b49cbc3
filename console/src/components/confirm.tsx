import { useEffect, useRef } from 'preact/hooks';

/**
 * Every change an operator makes from the console is confirmed in a modal `<dialog>` (keyboard:
 * Enter confirms, Escape cancels; focus starts on Cancel for destructive actions).
 */
export interface ConfirmProps {
  title: string;
  /** What will happen, in a sentence. */
  children: preact.ComponentChildren;
  confirmLabel: string;
  destructive?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

export function Confirm(props: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    // A destructive action is not one Enter away: focus starts on Cancel. Otherwise Enter
    // confirms: showModal focuses the first control, which is Cancel when the dialog has no field.
    if (props.destructive) cancel.current?.focus();
    else if (document.activeElement === cancel.current) confirm.current?.focus();
    return () => element?.close();
  }, [props.destructive]);
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          props.onConfirm();
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        <div class="confirm-body">{props.children}</div>
        <div class="actions">
          <button type="button" ref={cancel} onClick={props.onCancel}>
            Cancel
          </button>
          <button
            type="submit"
            ref={confirm}
            class={props.destructive ? 'danger' : 'primary'}
            disabled={props.busy}
          >
            {props.busy ? 'Working…' : props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
