import type { ComponentType } from 'preact';
import type { GatewayInfo } from '../../../proxy/src/api/answers.ts';

export interface PageProps {
  /** Path segments after the page's own (`#/logs/abc` → ['abc']). */
  rest: string[];
  /** The hash's query (`#/logs?model=gpt-4o`). */
  params: URLSearchParams;
  info: GatewayInfo;
}

export interface PageDef {
  /** First hash path segment: `#/<path>`. */
  path: string;
  title: string;
  component: ComponentType<PageProps>;
}
