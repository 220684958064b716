// Loaded into every test file's process (node --test --import). Ends a file whose tests are done but
// that still holds a socket or timer open, without hanging the run.
//
// Not --test-force-exit: that flag exits as soon as the last test settles, before the reporter has
// written the remaining results, so a green file could report only part of its tests (a run counted
// 2,439 of 2,447 with nothing failed). Here the root `after` hook arms an unref'd timer: a file that
// closed everything exits on its own before it fires; one that did not is ended once every result is
// written, and says so on stderr. The timer starts before the file's own top-level `after` hooks (this
// one is registered first), so it leaves them time to stop what they started (a control plane takes
// seconds): cutting them short would orphan their processes.
import { after } from 'node:test';

const GRACE_MS = 20_000;

// Only in the per-file child processes: the runner process has no tests of its own.
if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    setTimeout(() => {
      // What holds the loop (e.g. "TCPSocketWrap ×2, Timeout"): where to look for the leak.
      const held = new Map<string, number>();
      for (const r of process.getActiveResourcesInfo()) held.set(r, (held.get(r) ?? 0) + 1);
      const list = [...held].map(([r, n]) => (n > 1 ? `${r} ×${n}` : r)).join(', ');
      process.stderr.write(`${process.argv[1] ?? 'a test file'}: handles still open after its tests (${list}); ending it\n`);
      process.exit();
    }, GRACE_MS).unref();
  });
}
