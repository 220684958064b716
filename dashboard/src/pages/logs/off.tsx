// Shown by the pages built on request logs when this gateway keeps none.
import { Banner, PageHeader } from '../../ui/components.tsx';

export function LogsOff(props: { title: string }) {
  return (
    <>
      <PageHeader title={props.title} />
      <Banner kind="info">
        Request logs are off on this gateway, so there is nothing to show here. Turn them on with <code>client.enable_logging: true</code> (SQLite in the app directory) or a <code>logs_store</code> in
        config.json.
      </Banner>
    </>
  );
}
