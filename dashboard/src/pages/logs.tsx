// Logs: the searchable list (`#/logs?<filters>`) and one request's detail (`#/logs/<id>`).
import type { PageProps } from './types.ts';
import { LogDetail } from './logs/detail.tsx';
import { LogList } from './logs/list.tsx';
import { LogsOff } from './logs/off.tsx';

export function LogsPage(props: PageProps) {
  if (!props.info.features.logs) return <LogsOff title="Logs" />;
  return props.rest[0] ? <LogDetail id={props.rest[0]} /> : <LogList params={props.params} />;
}
