// Every page of the dashboard, in navigation order. A page is one module exporting its component.
import type { PageDef } from './types.ts';
import { OverviewPage } from './overview.tsx';
import { LogsPage } from './logs.tsx';
import { ProvidersPage } from './providers.tsx';
import { VirtualKeysPage } from './virtual-keys.tsx';
import { TeamsPage } from './teams.tsx';
import { BudgetsPage } from './budgets.tsx';
import { ModelsPage } from './models.tsx';
import { RoutingPage } from './routing.tsx';
import { CachePage } from './cache.tsx';
import { WebhooksPage } from './webhooks.tsx';
import { McpPage } from './mcp.tsx';
import { RealtimePage } from './realtime.tsx';
import { SkillsPage } from './skills.tsx';
import { AuditPage } from './audit.tsx';
import { ManagementKeysPage } from './management-keys.tsx';
import { SettingsPage } from './settings.tsx';
import { PlaygroundPage } from './playground.tsx';

export const PAGES: readonly PageDef[] = [
  { path: 'overview', title: 'Overview', component: OverviewPage },
  { path: 'logs', title: 'Logs', component: LogsPage },
  { path: 'providers', title: 'Providers', component: ProvidersPage },
  { path: 'virtual-keys', title: 'Virtual keys', component: VirtualKeysPage },
  { path: 'teams', title: 'Teams & customers', component: TeamsPage },
  { path: 'budgets', title: 'Budgets & rate limits', component: BudgetsPage },
  { path: 'models', title: 'Models & pricing', component: ModelsPage },
  { path: 'playground', title: 'Playground', component: PlaygroundPage },
  { path: 'routing', title: 'Routing rules', component: RoutingPage },
  { path: 'cache', title: 'Plugins & cache', component: CachePage },
  { path: 'webhooks', title: 'Webhooks', component: WebhooksPage },
  { path: 'mcp', title: 'MCP', component: McpPage },
  { path: 'realtime', title: 'Realtime sessions', component: RealtimePage },
  { path: 'skills', title: 'Skills', component: SkillsPage },
  { path: 'audit', title: 'Audit log', component: AuditPage },
  { path: 'management-keys', title: 'Management keys', component: ManagementKeysPage },
  { path: 'settings', title: 'Settings', component: SettingsPage },
];
