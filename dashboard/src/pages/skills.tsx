// Skills: the gateway's Agent Skills repository (/api/skills). The list with each skill's current
// version and how agents install them; a skill's page shows its draft's files, edits them, publishes
// the draft as a SemVer version, and downloads or deletes versions. Skills live in the request-log
// store, not in the configuration, so they can be edited in Kubernetes mode too.
import { useState } from 'preact/hooks';
import { del, get, post, put } from '../lib/api.ts';
import { useAction, useAsync } from '../lib/hooks.ts';
import { Banner, Button, ErrorBox, Field, Loading, Modal, PageHeader, Table, TextInput } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { NEW_SKILL_MD, SkillEditor } from './skills/editor.tsx';
import { ZipUpload } from './skills/zip-upload.tsx';
import './skills.css';
import type { SkillDetail, SkillList, SkillSummary, SkillVersionView } from '../../../proxy/src/api/answers.ts';

const path = (name: string) => `/api/skills/${encodeURIComponent(name)}`;
const when = (iso: string) => new Date(iso).toLocaleString();

export function SkillsPage(props: PageProps) {
  const name = props.rest[0];
  return (
    <div class="sk">
      {!props.info.features.skills && (
        <Banner kind="warning">
          The skills repository lives in the request-log store, and none is open on this gateway: set <code>logs_store</code> or <code>client.enable_logging</code> to keep skills.
        </Banner>
      )}
      {name ? <SkillPage name={decodeURIComponent(name)} /> : <SkillListPage store={props.info.features.skills} />}
    </div>
  );
}

function InstallHint() {
  const git = `${location.origin}/skills/marketplace.git`;
  return (
    <section aria-labelledby="sk-install" class="stack">
      <h2 id="sk-install">Install from agents</h2>
      <p class="muted">Published skills form a plugin marketplace (one plugin per skill, its current version). Agents add it once and install skills from it:</p>
      <pre class="mono" data-testid="install-commands">{`claude plugin marketplace add ${git}\ncodex plugin marketplace add ${git}`}</pre>
      <p class="muted">
        Or download <a href="/skills/all.zip">every skill</a> as one archive. The JSON index is at <a href="/skills">/skills</a>.
      </p>
    </section>
  );
}

function SkillListPage(props: { store: boolean }) {
  const list = useAsync(() => get<SkillList>('/api/skills'), []);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader title="Skills">
        <Button kind="primary" onClick={() => setCreating(true)} disabled={!props.store}>
          New skill
        </Button>
      </PageHeader>
      <p class="muted">Agent Skills: a SKILL.md whose front matter names and describes the skill, and the files it uses. Publish a draft as an immutable version to serve it.</p>
      {props.store && (
        <ZipUpload
          label="New skill from a ZIP archive"
          onUpload={async (archive) => {
            const created = await post<SkillDetail>('/api/skills', { archive });
            location.hash = `#/skills/${encodeURIComponent(created.name)}`;
          }}
        />
      )}
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : (
        <Table<SkillSummary>
          caption="Skills"
          rows={list.data?.skills ?? []}
          rowKey={(s) => s.name}
          empty="No skill yet."
          columns={[
            { label: 'Name', render: (s) => <a href={`#/skills/${encodeURIComponent(s.name)}`}>{s.name}</a> },
            { label: 'Description', render: (s) => s.description },
            { label: 'Served version', render: (s) => s.current_version ?? <span class="muted">not published</span> },
            { label: 'Versions', render: (s) => String(s.versions.length) },
            { label: 'Updated', render: (s) => when(s.updated_at) },
          ]}
        />
      )}
      <InstallHint />
      {creating && (
        <Modal title="New skill" onClose={() => setCreating(false)}>
          <SkillEditor
            files={[{ path: 'SKILL.md', size: NEW_SKILL_MD.length, encoding: 'utf8', content: NEW_SKILL_MD }]}
            saveLabel="Create skill"
            onCancel={() => setCreating(false)}
            onSave={async (files) => {
              const created = await post<SkillDetail>('/api/skills', { files });
              setCreating(false);
              location.hash = `#/skills/${encodeURIComponent(created.name)}`;
            }}
          />
        </Modal>
      )}
    </>
  );
}

function SkillPage(props: { name: string }) {
  const skill = useAsync(() => get<SkillDetail>(path(props.name)), [props.name]);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [deletingVersion, setDeletingVersion] = useState<string | undefined>(undefined);
  const [open, setOpen] = useState('SKILL.md');
  const [version, setVersion] = useState('');
  const publish = useAction(async () => {
    await post(`${path(props.name)}/versions`, { version: version.trim() });
    setVersion('');
    skill.reload();
  });
  const s = skill.data;
  if (!s) return skill.error ? <ErrorBox error={skill.error} /> : <Loading />;
  const shown = s.draft.find((f) => f.path === open) ?? s.draft[0];
  return (
    <>
      <PageHeader title={`Skill ${s.name}`}>
        <Button onClick={() => setEditing(true)}>Edit draft</Button>
        <Button kind="danger" onClick={() => setDeleting(true)}>
          Delete skill
        </Button>
      </PageHeader>
      <p>
        <a href="#/skills">All skills</a>
      </p>
      <p>{s.description}</p>
      <section aria-labelledby="sk-versions" class="stack">
        <h2 id="sk-versions">Versions</h2>
        <p class="muted">
          Served version: <strong data-testid="served-version">{s.current_version ?? 'none'}</strong>
          {s.default_version ? ' (pinned as the default)' : ' (the highest)'}
        </p>
        <Table<SkillVersionView>
          caption="Published versions"
          rows={[...s.versions].reverse()}
          rowKey={(v) => v.version}
          empty="Not published yet: publish the draft below."
          columns={[
            { label: 'Version', render: (v) => v.version },
            { label: 'Published', render: (v) => when(v.created_at) },
            { label: 'Files', render: (v) => String(v.file_count) },
            { label: 'Size', render: (v) => `${v.size} B` },
            { label: 'Digest', render: (v) => <span class="mono" title={v.digest}>{v.digest.slice(0, 12)}</span> },
            {
              label: 'Actions',
              render: (v) => (
                <span class="row">
                  <a href={`/skills/${encodeURIComponent(s.name)}/${encodeURIComponent(v.version)}.zip`} download>
                    Download {v.version}
                  </a>
                  <Button kind="danger" onClick={() => setDeletingVersion(v.version)} label={`Delete version ${v.version}`}>
                    Delete
                  </Button>
                </span>
              ),
            },
          ]}
        />
        <form
          class="row"
          aria-label="Publish the draft"
          onSubmit={(e) => {
            e.preventDefault();
            void publish.run();
          }}
        >
          <Field label="New version" hint={`SemVer, greater than ${s.latest_version ?? 'any before'}`}>
            <TextInput value={version} onInput={setVersion} name="version" placeholder="1.0.0" />
          </Field>
          <Button kind="primary" type="submit" disabled={publish.busy || version.trim() === ''}>
            Publish draft
          </Button>
        </form>
        <ErrorBox error={publish.error} />
      </section>
      <section aria-labelledby="sk-draft" class="stack">
        <h2 id="sk-draft">Draft files</h2>
        <p class="muted">The files the next version is published from; a published version never changes.</p>
        <ZipUpload
          label="Replace the draft from a ZIP archive"
          onUpload={async (archive) => {
            await put(`${path(s.name)}/draft`, { archive });
            skill.reload();
          }}
        />
        <div class="sk-files">
          <ul aria-label="Draft files">
            {s.draft.map((f) => (
              <li key={f.path}>
                <button type="button" class={f.path === shown?.path ? 'link active' : 'link'} aria-current={f.path === shown?.path ? 'true' : undefined} onClick={() => setOpen(f.path)}>
                  {f.path}
                </button>{' '}
                <span class="muted">{f.size} B</span>
              </li>
            ))}
          </ul>
          {shown && (
            <pre class="mono sk-content" aria-label={`Content of ${shown.path}`}>
              {shown.encoding === 'utf8' ? shown.content : `(binary, ${shown.size} bytes)`}
            </pre>
          )}
        </div>
      </section>
      {editing && (
        <Modal title={`Edit draft of ${s.name}`} onClose={() => setEditing(false)}>
          <SkillEditor
            files={s.draft}
            saveLabel="Save draft"
            onCancel={() => setEditing(false)}
            onSave={async (files) => {
              await put(`${path(s.name)}/draft`, { files });
              setEditing(false);
              skill.reload();
            }}
          />
        </Modal>
      )}
      {deleting && (
        <ConfirmDelete what={`skill ${s.name}`} onConfirm={() => del(path(s.name))} onClose={() => setDeleting(false)} onDone={() => (location.hash = '#/skills')}>
          Every version is deleted with it, and agents can no longer install it.
        </ConfirmDelete>
      )}
      {deletingVersion && (
        <ConfirmDelete
          what={`version ${deletingVersion}`}
          onConfirm={() => del(`${path(s.name)}/versions/${encodeURIComponent(deletingVersion)}`)}
          onClose={() => setDeletingVersion(undefined)}
          onDone={() => (setDeletingVersion(undefined), skill.reload())}
        >
          Its files are deleted; the number stays taken, so it can never come back with other content.
        </ConfirmDelete>
      )}
    </>
  );
}
