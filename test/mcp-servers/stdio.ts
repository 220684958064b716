// A test MCP server over stdio: `node test/mcp-servers/stdio.ts [basic|listing-fails|changing|crash|slow-start <ms>]`.
// `crash` exits at once with a message on stderr (a server that cannot start). `slow-start` answers
// only after <ms> (a server downloaded on first use, as `npx -y` does).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildServer, type Variant } from './tools.ts';

const variant = (process.argv[2] ?? 'basic') as Variant | 'crash' | 'slow-start';
if (variant === 'crash') {
  process.stderr.write('test server: cannot start on purpose\n');
  process.exit(3);
}
if (variant === 'slow-start') await new Promise((r) => setTimeout(r, Number(process.argv[3] ?? 2000)));
await buildServer(variant === 'slow-start' ? 'basic' : variant, {}, true).connect(new StdioServerTransport());
