// Shown by the pages built on request logs when this gateway keeps none.
import { Banner, PageHeader } from '../../ui/components.tsx';

export function LogsOff(props: { title: string }) {
  return (
    <>
      <PageHeader title={props.title} />
      <Banner kind="info">
        Request logs are off on this gateway, so there is nothing to show here. They are on by default (SQLite, <code>logs.db</code> in the app directory): either{' '}
        <code>client.enable_logging</code> is <code>false</code> in config.json, or the store could not be opened (the gateway's start-up log says why).
      </Banner>
    </>
  );
}
