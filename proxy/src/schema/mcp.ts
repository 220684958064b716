// MCP clients (spec: "MCP client configuration"; the reference config's `mcp` section): the
// config.json `mcp.client_configs[]` items, the global tool manager settings and the section itself.
// The single source of truth for this resource: ajv validates with it, `Static` gives the types, and
// the MCPClient CRD is generated from it.
import { Type, type Static } from '@sinclair/typebox';
import { validator } from './validate.ts';

export const MCP_CONNECTION_TYPES = ['http', 'stdio', 'sse', 'websocket'] as const;
export type McpConnectionType = (typeof MCP_CONNECTION_TYPES)[number];

/**
 * What each connection type needs besides itself: every entry is a list of alternatives, one of
 * which must be set (the reference's oneOf, kept as data so the proxy check and the CRD's CEL rule
 * come from the same table).
 */
export const MCP_CONNECTION_REQUIREMENTS: Readonly<Record<McpConnectionType, readonly (readonly string[])[]>> = {
  http: [['http_config', 'connection_string']],
  stdio: [['stdio_config']],
  sse: [['connection_string']],
  websocket: [['websocket_config']],
};

/** Go duration as the reference writes tool sync intervals: `10m`, `1h30m`, `0` (use the global), `-1m` (disabled). */
export const GO_DURATION_PATTERN = '^(0|-?([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$';

const Name = Type.String({ minLength: 1, maxLength: 256 });
const ToolList = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 1000, description });
const UrlOf = (description: string) => Type.String({ minLength: 1, maxLength: 2048, description });

export const McpStdioConfigSchema = Type.Object(
  {
    command: Type.String({ minLength: 1, maxLength: 4096, description: 'The program to run (npx, uvx, a path).' }),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 256, description: 'Its arguments.' })),
    envs: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 256, description: 'Environment variables of the command.' })),
  },
  { additionalProperties: false, description: 'A server the gateway runs as a child process, speaking MCP on its stdin and stdout.' },
);

export const McpClientConfigSchema = Type.Object(
  {
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'MCP client identifier.' })),
    name: Type.String({ minLength: 1, maxLength: 256, description: "The client's global object name in code mode." }),
    is_code_mode_client: Type.Optional(Type.Boolean({ description: 'Expose the tools only through the code-mode meta-tools.' })),
    connection_type: Type.Union(
      MCP_CONNECTION_TYPES.map((t) => Type.Literal(t)),
      { description: 'http and sse need connection_string (http: or http_config), stdio needs stdio_config, websocket needs websocket_config.' },
    ),
    connection_string: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'URL of an http or sse server.' })),
    auth_type: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('headers'), Type.Literal('oauth')], { description: 'none, headers (send headers), or oauth (oauth_config_id).' })),
    oauth_config_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'The OAuth configuration used with auth_type oauth.' })),
    headers: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: 8192 }), {
        maxProperties: 64,
        description: 'Sent with every request (auth_type headers).',
      }),
    ),
    stdio_config: Type.Optional(McpStdioConfigSchema),
    websocket_config: Type.Optional(Type.Object({ url: UrlOf('ws:// or wss:// URL of the server.') }, { additionalProperties: false, description: 'A server reached over a WebSocket.' })),
    http_config: Type.Optional(Type.Object({ url: UrlOf('URL of the streamable HTTP server.') }, { additionalProperties: false, description: 'A streamable HTTP server (instead of connection_string).' })),
    tools_to_execute: Type.Optional(ToolList("Tools that may run, also inside code: ['*'] all, [] none.")),
    tools_to_auto_execute: Type.Optional(ToolList("Tools allowed to run unattended in agent mode: ['*'] all, [] none.")),
    tool_sync_interval: Type.Optional(
      Type.String({ maxLength: 64, pattern: GO_DURATION_PATTERN, description: "Per-client tool sync interval ('10m'; '0' uses the global one; negative disables)." }),
    ),
    is_ping_available: Type.Optional(Type.Boolean({ description: 'The server answers ping for health checks (default true).' })),
    tool_pricing: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.Number({ minimum: 0 }), { maxProperties: 1000, description: 'Tool name to cost per execution (USD).' }),
    ),
    allow_on_all_virtual_keys: Type.Optional(
      Type.Boolean({ description: "Virtual keys without an mcp_configs entry for this client may use all its tools (default false: deny)." }),
    ),
    connect_timeout: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3600, description: 'Seconds a connect attempt (start, initialize, first tools/list) may take (default 15). A stdio server fetched on first use (npx -y, uvx) needs more.' }),
    ),
    allow_without_virtual_key: Type.Optional(
      Type.Boolean({ description: 'Callers without a virtual key (when inference auth is off) may use its tools (default false: its tools are not offered to them).' }),
    ),
  },
  { additionalProperties: false },
);

/** `mcp.tool_manager_config`. */
export const McpToolManagerConfigSchema = Type.Object(
  {
    tool_execution_timeout: Type.Optional(Type.Integer({ minimum: 1, description: 'Seconds per tool execution (default 30).' })),
    max_agent_depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Agent mode: model turns at most per request (default 10).' })),
    code_mode_binding_level: Type.Optional(Type.Union([Type.Literal('server'), Type.Literal('tool')], { description: 'Default server.' })),
    max_tool_answer_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, description: 'MiB one message from an MCP server (a tool answer) may weigh; a larger one is not read and the call fails (default 16).' })),
  },
  { additionalProperties: false },
);

/** One `governance.virtual_keys[].mcp_configs[]` item: the tools a key may call on one client. */
export const McpVirtualKeyConfigSchema = Type.Object(
  {
    id: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 128 })])),
    mcp_client_name: Type.Optional(Name),
    mcp_client_id: Type.Optional(Type.Union([Type.Integer(), Type.String({ minLength: 1, maxLength: 128 })])),
    tools_to_execute: Type.Optional(ToolList("Tools this key may call on the client: ['*'] all, [] none.")),
  },
  { additionalProperties: false },
);

/** config.json `mcp`. */
export const McpSectionSchema = Type.Object(
  {
    client_configs: Type.Optional(Type.Array(McpClientConfigSchema)),
    tool_manager_config: Type.Optional(McpToolManagerConfigSchema),
    tool_sync_interval: Type.Optional(Type.String({ pattern: GO_DURATION_PATTERN })),
  },
  { additionalProperties: false },
);

export type McpStdioConfig = Static<typeof McpStdioConfigSchema>;
export type McpClientConfig = Static<typeof McpClientConfigSchema>;
export type McpToolManagerConfig = Static<typeof McpToolManagerConfigSchema>;
export type McpSection = Static<typeof McpSectionSchema>;
export type McpVirtualKeyConfig = Static<typeof McpVirtualKeyConfigSchema>;

/** Client names are tool-name prefixes (`<client>-<tool>`) and code-mode globals: a safe identifier. */
export const MCP_CLIENT_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

// HTTP clients refuse a URL with userinfo (fetch throws before connecting), so such a client could
// never connect; and a URL is configuration, stored in ConfigMaps and shown, not a secret store.
const URL_CREDENTIALS = 'must not carry credentials (user:password@host): fetch refuses such a URL, so the client could never connect; send them in headers, with an env. or Secret reference';

/**
 * Rules the schema cannot say: names and ids unique, names usable as identifiers, what each
 * connection type needs, URLs that parse. Used by config loading and /api/mcp writes alike.
 */
export function mcpConfigErrors(section: McpSection | undefined): { path: string; message: string }[] {
  const errors: { path: string; message: string }[] = [];
  const names = new Set<string>();
  const ids = new Set<string>();
  (section?.client_configs ?? []).forEach((c, i) => {
    const at = `mcp.client_configs[${i}]`;
    if (!MCP_CLIENT_NAME.test(c.name)) errors.push({ path: `${at}.name`, message: 'must start with a letter or _ and hold only letters, digits, _ and - (at most 64): it names the tools (<name>-<tool>) and the code-mode global' });
    if (names.has(c.name)) errors.push({ path: `${at}.name`, message: `duplicate MCP client name '${c.name}'` });
    names.add(c.name);
    const id = c.client_id ?? c.name;
    if (ids.has(id)) errors.push({ path: `${at}.client_id`, message: `duplicate MCP client id '${id}'` });
    ids.add(id);
    for (const alternatives of MCP_CONNECTION_REQUIREMENTS[c.connection_type]) {
      if (!alternatives.some((f) => (c as Record<string, unknown>)[f] !== undefined)) errors.push({ path: `${at}.${alternatives[0]}`, message: `is required for connection_type ${c.connection_type}` });
    }
    const url = c.connection_string ?? c.http_config?.url;
    const urlPath = c.connection_string !== undefined ? `${at}.connection_string` : `${at}.http_config.url`;
    if (url !== undefined && (c.connection_type === 'http' || c.connection_type === 'sse')) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) errors.push({ path: urlPath, message: 'must be an absolute http(s) URL' });
      else if (parsed.username || parsed.password) errors.push({ path: urlPath, message: URL_CREDENTIALS });
    }
  });
  return errors;
}

const checkVkMcp = validator(McpVirtualKeyConfigSchema);

/**
 * `governance.virtual_keys[].mcp_configs` items (typed loosely in the governance schema): each is
 * `{mcp_client_name | mcp_client_id, tools_to_execute}`.
 */
export function vkMcpErrors(vks: readonly { mcp_configs?: unknown[] }[] | undefined): { path: string; message: string }[] {
  const errors: { path: string; message: string }[] = [];
  (vks ?? []).forEach((vk, i) => {
    (vk.mcp_configs ?? []).forEach((raw, j) => {
      const at = `governance.virtual_keys[${i}].mcp_configs[${j}]`;
      const checked = checkVkMcp(raw);
      if (Array.isArray(checked)) {
        for (const e of checked) errors.push({ path: e.path === '(root)' ? at : `${at}.${e.path}`, message: e.message });
        return;
      }
      // An entry for a client that does not exist (yet) grants nothing: not an error, so a VirtualKey
      // and an MCPClient can be created in any order.
      if (checked.mcp_client_name === undefined && checked.mcp_client_id === undefined) {
        errors.push({ path: `${at}.mcp_client_name`, message: 'is required (or mcp_client_id): the MCP client this entry is for' });
      }
    });
  });
  return errors;
}
