// A skill's files as a form: one path and one text area per file (binary files are kept as they are
// and shown by size), files added and removed. What it saves is the /api/skills `files` array; the
// gateway checks it whole (SKILL.md's front matter, paths, limits) and its refusal names the field.
import { useState } from 'preact/hooks';
import { Button, ErrorBox, TextArea, TextInput } from '../../ui/components.tsx';
import { useAction } from '../../lib/hooks.ts';
import type { SkillFileView } from '../../../../proxy/src/api/answers.ts';

export const NEW_SKILL_MD = '---\nname: my-skill\ndescription: What this skill does, and when an agent should use it.\n---\n\n# My skill\n\nInstructions for the agent.\n';

interface EditedFile {
  path: string;
  content: string;
  encoding: 'utf8' | 'base64';
}

export function SkillEditor(props: { files: readonly SkillFileView[]; saveLabel: string; onSave: (files: EditedFile[]) => Promise<unknown>; onCancel: () => void }) {
  const [files, setFiles] = useState<EditedFile[]>(() => props.files.map((f) => ({ path: f.path, content: f.content, encoding: f.encoding })));
  const save = useAction(async () => props.onSave(files));
  const set = (i: number, change: Partial<EditedFile>) => setFiles(files.map((f, j) => (j === i ? { ...f, ...change } : f)));
  return (
    <form
      class="stack"
      aria-label="Skill files"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      {files.map((f, i) => (
        <fieldset class="skill-file" key={i}>
          <legend class="sr-only">File {i + 1}</legend>
          <div class="row">
            <label class="grow">
              <span>Path of file {i + 1}</span>
              <TextInput value={f.path} onInput={(v) => set(i, { path: v })} name={`path-${i}`} />
            </label>
            <Button kind="danger" onClick={() => setFiles(files.filter((_, j) => j !== i))} label={`Remove ${f.path || `file ${i + 1}`}`}>
              Remove
            </Button>
          </div>
          {f.encoding === 'utf8' ? (
            <label>
              <span>Content of {f.path || `file ${i + 1}`}</span>
              <TextArea value={f.content} onInput={(v) => set(i, { content: v })} rows={f.path === 'SKILL.md' ? 12 : 5} mono />
            </label>
          ) : (
            <p class="muted">Binary file ({Math.floor((f.content.length * 3) / 4)} bytes), kept as it is.</p>
          )}
        </fieldset>
      ))}
      <div class="row">
        <Button onClick={() => setFiles([...files, { path: '', content: '', encoding: 'utf8' }])}>Add file</Button>
      </div>
      <ErrorBox error={save.error} />
      <div class="row">
        <Button kind="primary" type="submit" disabled={save.busy}>
          {props.saveLabel}
        </Button>
        <Button onClick={props.onCancel}>Cancel</Button>
      </div>
    </form>
  );
}
