// The skills repository's pure parts: path normalisation, SKILL.md front matter, SemVer precedence,
// the ZIP reader and writer (against each other and against hand-damaged input), the git objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { checkSkill, DEFAULT_LIMITS, normalisePath } from '../../proxy/src/skills/files.ts';
import { readSkillMd, skillNameProblem } from '../../proxy/src/skills/front-matter.ts';
import { compareSemver, isSemver, nextVersion } from '../../proxy/src/skills/semver.ts';
import { readZip, stripTopDirectory, writeZip } from '../../proxy/src/skills/zip.ts';
import { buildRepo } from '../../proxy/src/skills/git.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const refusal = (param: string, status = 400) => (e: unknown) => e instanceof GatewayError && e.status === status && e.param === param;

test('paths are normalised, and none can leave the skill', () => {
  assert.equal(normalisePath('./a//b/./c.md', 'p'), 'a/b/c.md');
  for (const bad of ['', '..', 'a/../../b', '/etc/passwd', 'C:/x', 'c:x', 'a\\b', 'a\u0000b', 'a\nb', '.', './', 'x'.repeat(513)]) {
    assert.throws(() => normalisePath(bad, 'files[2].path'), refusal('files[2].path'), JSON.stringify(bad));
  }
  // Whatever the input, an accepted path is relative and has no '..' or empty segment.
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (s) => {
      let p: string;
      try {
        p = normalisePath(s, 'p');
      } catch (e) {
        return e instanceof GatewayError && e.status === 400;
      }
      return !p.startsWith('/') && p.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..') && !p.includes('\\');
    }),
  );
});

test('SKILL.md front matter follows the Agent Skills spec', () => {
  const md = (fm: string) => Buffer.from(`---\n${fm}\n---\nbody\n`);
  assert.deepEqual(readSkillMd(md('name: a-b1\ndescription: does a'), 'c').name, 'a-b1');
  assert.equal(readSkillMd(Buffer.from('\uFEFF---\r\nname: crlf\r\ndescription: x\r\n---\r\n'), 'c').name, 'crlf');
  for (const name of ['A', 'a_b', '-a', 'a-', 'a--b', 'x'.repeat(65), '']) assert.ok(skillNameProblem(name), name);
  assert.equal(skillNameProblem('x'.repeat(64)), undefined);
  assert.throws(() => readSkillMd(md('name: ok\ndescription: ""'), 'c'), refusal('c.description'));
  assert.throws(() => readSkillMd(md(`name: ok\ndescription: ${'d'.repeat(1025)}`), 'c'), refusal('c.description'));
  assert.throws(() => readSkillMd(md(`name: ok\ndescription: d\ncompatibility: ${'c'.repeat(501)}`), 'c'), refusal('c.compatibility'));
  assert.throws(() => readSkillMd(md('name: ok\ndescription: d\nmetadata: [1]'), 'c'), refusal('c.metadata'));
  assert.throws(() => readSkillMd(md('name: ok\nname: again\ndescription: d'), 'c'), refusal('c'));
  assert.throws(() => readSkillMd(md('- a list'), 'c'), refusal('c'));
  assert.throws(() => readSkillMd(Buffer.from('name: ok\ndescription: d\n'), 'c'), refusal('c'));
});

test('checkSkill orders SKILL.md first and refuses a file that is also a directory', () => {
  const f = (path: string, text = 'x') => ({ path, data: Buffer.from(text) });
  const skill = f('SKILL.md', '---\nname: s\ndescription: d\n---\n');
  assert.deepEqual(checkSkill([f('b'), f('a/c'), skill], DEFAULT_LIMITS).files.map((x) => x.path), ['SKILL.md', 'a/c', 'b']);
  assert.throws(() => checkSkill([skill, f('a'), f('a/b')], DEFAULT_LIMITS), refusal('files[2].path'));
});

test('SemVer precedence is the spec’s', () => {
  const ordered = ['0.9.0', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.10.0', '2.0.0', '18446744073709551616.0.0'];
  for (let i = 0; i < ordered.length; i++) for (let j = 0; j < ordered.length; j++) assert.equal(Math.sign(compareSemver(ordered[i], ordered[j])), Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
  assert.equal(compareSemver('1.0.0+build.1', '1.0.0'), 0);
  for (const bad of ['1', '1.0', '01.0.0', '1.0.0-', 'v1.0.0', '1.0.0-01', '']) assert.equal(isSemver(bad), false, bad);
  assert.equal(nextVersion(undefined), '1.0.0');
  assert.equal(nextVersion('1.4.2'), '1.5.0');
});

test('a written archive reads back; damaged or oversized archives are refused', () => {
  const entries = [
    { path: 'dir/SKILL.md', data: Buffer.from('---\nname: dir\ndescription: d\n---\n') },
    { path: 'dir/big.txt', data: Buffer.from('a'.repeat(10_000)) },
    { path: 'dir/rand.bin', data: createHash('sha512').update('x').digest() },
  ];
  const zip = writeZip(entries, Date.UTC(2026, 0, 2));
  assert.deepEqual(readZip(zip, DEFAULT_LIMITS), entries);
  assert.deepEqual(stripTopDirectory(entries).map((e) => e.path), ['SKILL.md', 'big.txt', 'rand.bin']);
  assert.deepEqual(writeZip(entries, Date.UTC(2026, 0, 2)), zip, 'one content, one archive');
  const damaged = Buffer.from(zip);
  damaged[30 + 12 + 3] ^= 0xff; // inside the first entry's data (after its 30-byte header and 12-byte name)
  assert.throws(() => readZip(damaged, DEFAULT_LIMITS), refusal('archive'));
  assert.throws(() => readZip(zip, { ...DEFAULT_LIMITS, maxFileBytes: 9999 }), refusal('archive', 413));
  assert.throws(() => readZip(zip, { ...DEFAULT_LIMITS, maxTotalBytes: 10_050 }), refusal('archive', 413));
  assert.throws(() => readZip(Buffer.from('PK nothing'), DEFAULT_LIMITS), refusal('archive'));
});

test('git objects are what git computes: ids are SHA-1 of the header and body', () => {
  const repo = buildRepo([{ path: 'a/b.txt', data: Buffer.from('hello\n') }, { path: 'a.txt', data: Buffer.from('') }], Date.UTC(2026, 0, 1), 'msg');
  // `echo hello | git hash-object --stdin` and the empty blob's well-known id.
  assert.ok(repo.objects.has('ce013625030ba8dba906f756967f9e9ca394464a'));
  assert.ok(repo.objects.has('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'));
  for (const [id, deflated] of repo.objects) assert.equal(createHash('sha1').update(inflateSync(deflated)).digest('hex'), id);
  const commit = inflateSync(repo.objects.get(repo.head)!).toString();
  assert.match(commit, /^commit \d+\0tree [0-9a-f]{40}\nauthor Skybridge <skills@skybridge\.invalid> 1767225600 \+0000\n/);
  assert.equal(buildRepo([{ path: 'a/b.txt', data: Buffer.from('hello\n') }, { path: 'a.txt', data: Buffer.from('') }], Date.UTC(2026, 0, 1), 'msg').head, repo.head);
});
