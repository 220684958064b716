// A ZIP archive of a skill chosen in the browser, sent as /api/skills's `archive` (base64): the
// gateway unpacks and checks it like any upload, and its refusal shows here naming the field.
import { ErrorBox } from '../../ui/components.tsx';
import { useAction } from '../../lib/hooks.ts';

function base64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function ZipUpload(props: { label: string; onUpload: (archive: string) => Promise<unknown> }) {
  const upload = useAction(async (file: File) => props.onUpload(base64(new Uint8Array(await file.arrayBuffer()))));
  return (
    <div class="stack">
      <label class="btn">
        {props.label}
        <input
          class="sr-only"
          type="file"
          accept=".zip,application/zip"
          disabled={upload.busy}
          onChange={(e) => {
            const input = e.currentTarget as HTMLInputElement;
            const file = input.files?.[0];
            input.value = '';
            if (file) void upload.run(file);
          }}
        />
      </label>
      <ErrorBox error={upload.error} />
    </div>
  );
}
