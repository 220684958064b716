// A test MCP server over stdio: `node test/mcp-servers/stdio.ts [basic|listing-fails|changing|crash]`.
// `crash` exits at once with a message on stderr (a server that cannot start).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildServer, type Variant } from './tools.ts';

const variant = (process.argv[2] ?? 'basic') as Variant | 'crash';
if (variant === 'crash') {
  process.stderr.write('test server: cannot start on purpose\n');
  process.exit(3);
}
await buildServer(variant, {}, true).connect(new StdioServerTransport());
