// The pre-flight text scan of executeToolCode (spec rule 7). It only decides whether agent mode asks
// before running code; the authoritative check happens inside each tool binding at call time.
import type { CatalogServer } from './stubs.ts';

/** The code with string literals and comments blanked out (newlines kept), so they cannot match. */
export function codeOnly(code: string): string {
  let out = '';
  let i = 0;
  while (i < code.length) {
    const c = code[i];
    if (c === '#') {
      while (i < code.length && code[i] !== '\n') {
        out += ' ';
        i++;
      }
      continue;
    }
    if (c === '"' || c === "'") {
      const quote = code.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      out += '"';
      i += quote.length;
      while (i < code.length && !code.startsWith(quote, i)) {
        if (code[i] === '\\') {
          out += ' ';
          i++;
        }
        if (i < code.length) {
          out += code[i] === '\n' ? '\n' : ' ';
          i++;
        }
      }
      out += '"';
      i += quote.length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * True when every use of a server global is a direct call `server.tool(` of a tool in
 * tools_to_auto_execute. Aliasing (`g = server`), getattr, or a server passed as a value answer false.
 */
export function preflight(code: string, servers: CatalogServer[], autoExecute: (server: string, tool: string) => boolean): boolean {
  const text = codeOnly(code);
  if (/\bgetattr\b/.test(text)) return false;
  for (const server of servers) {
    const uses = new RegExp(`(?<![\\w.])${escapeRegExp(server.global)}(?!\\w)`, 'g');
    for (const use of text.matchAll(uses)) {
      const call = /^\s*\.\s*([A-Za-z_]\w*)\s*\(/.exec(text.slice(use.index + use[0].length));
      if (!call) return false;
      const tool = server.tools.find((t) => t.attr === call[1]);
      if (!tool || !autoExecute(server.name, tool.name)) return false;
    }
  }
  return true;
}
