// A read-only git repository of one commit, served over git's "dumb" HTTP protocol (info/refs,
// HEAD and loose objects: files a plain web server could serve). `git clone` and the tools that
// clone marketplaces (Claude Code, Codex) read it without a git server. The commit's time is the
// newest published version's, so replicas serving the same skills serve the same commit id.
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { SkillFile } from './files.ts';

export interface GitRepo {
  /** The commit id refs/heads/main points at. */
  head: string;
  /** Loose objects (zlib-deflated, as git stores them) by id. */
  objects: Map<string, Buffer>;
  infoRefs: string;
}

interface TreeNode {
  files: Map<string, Buffer>;
  dirs: Map<string, TreeNode>;
}

function put(objects: Map<string, Buffer>, type: string, body: Buffer): Buffer {
  const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`, 'utf8'), body]);
  const id = createHash('sha1').update(raw).digest();
  objects.set(id.toString('hex'), deflateSync(raw));
  return id;
}

function writeTree(objects: Map<string, Buffer>, node: TreeNode): Buffer {
  const entries: { sortKey: string; bytes: Buffer }[] = [];
  for (const [name, data] of node.files) {
    const id = put(objects, 'blob', data);
    entries.push({ sortKey: name, bytes: Buffer.concat([Buffer.from(`100644 ${name}\0`, 'utf8'), id]) });
  }
  for (const [name, child] of node.dirs) {
    const id = writeTree(objects, child);
    // git orders a directory as if its name ended with '/'.
    entries.push({ sortKey: `${name}/`, bytes: Buffer.concat([Buffer.from(`40000 ${name}\0`, 'utf8'), id]) });
  }
  entries.sort((a, b) => Buffer.compare(Buffer.from(a.sortKey, 'utf8'), Buffer.from(b.sortKey, 'utf8')));
  return put(objects, 'tree', Buffer.concat(entries.map((e) => e.bytes)));
}

export function buildRepo(files: readonly SkillFile[], time: number, message: string): GitRepo {
  const root: TreeNode = { files: new Map(), dirs: new Map() };
  for (const f of files) {
    const parts = f.path.split('/');
    let node = root;
    for (const dir of parts.slice(0, -1)) {
      let next = node.dirs.get(dir);
      if (!next) node.dirs.set(dir, (next = { files: new Map(), dirs: new Map() }));
      node = next;
    }
    node.files.set(parts.at(-1)!, f.data);
  }
  const objects = new Map<string, Buffer>();
  const tree = writeTree(objects, root).toString('hex');
  const seconds = Math.floor(time / 1000);
  const who = `Skybridge <skills@skybridge.invalid> ${seconds} +0000`;
  const commit = put(objects, 'commit', Buffer.from(`tree ${tree}\nauthor ${who}\ncommitter ${who}\n\n${message}\n`, 'utf8')).toString('hex');
  return { head: commit, objects, infoRefs: `${commit}\trefs/heads/main\n` };
}
