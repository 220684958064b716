// The shell's state: is a login needed (GET /api/session/is-auth-enabled), what is this gateway
// (GET /api/dashboard), and which page the hash names. A 401 from any call brings the login back.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, onUnauthorized, post } from '../lib/api.ts';
import { reconnectLive, setLiveAuth } from '../lib/live.ts';
import type { PageDef } from '../pages/types.ts';
import { ErrorBox, Loading, PageHeader } from '../ui/components.tsx';
import { Layout } from './layout.tsx';
import { LoginPage } from './login.tsx';
import { useRoute } from './route.ts';
import type { GatewayInfo } from '../../../proxy/src/api/answers.ts';

type State = { at: 'loading' } | { at: 'login'; expired: boolean } | { at: 'ready'; info: GatewayInfo } | { at: 'failed'; error: unknown };

export function App(props: { pages: readonly PageDef[] }) {
  const [state, setState] = useState<State>({ at: 'loading' });
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const auth = await get<{ is_auth_enabled: boolean; has_valid_token: boolean }>('/api/session/is-auth-enabled');
        if (auth.is_auth_enabled && !auth.has_valid_token) {
          if (live) setState({ at: 'login', expired: false });
          return;
        }
        const info = await get<GatewayInfo>('/api/dashboard');
        setLiveAuth(info.auth_enabled);
        if (live) setState({ at: 'ready', info });
      } catch (error) {
        if (live) setState({ at: 'failed', error });
      }
    })();
    return () => {
      live = false;
    };
  }, [tick]);

  useEffect(() => onUnauthorized(() => setState((s) => (s.at === 'ready' ? { at: 'login', expired: true } : s))), []);

  if (state.at === 'loading') return <Loading />;
  if (state.at === 'failed')
    return (
      <main class="fatal" id="main">
        <h1>The dashboard could not reach the gateway</h1>
        <ErrorBox error={state.error} />
        <p>Without authentication (auth_config) the dashboard answers on the gateway's own machine only.</p>
      </main>
    );
  if (state.at === 'login')
    return (
      <LoginPage
        expired={state.expired}
        onLoggedIn={() => {
          reconnectLive();
          setTick((t) => t + 1);
        }}
      />
    );
  const logout = state.info.auth_enabled
    ? async () => {
        await post('/api/session/logout', {}).catch(() => undefined);
        setState({ at: 'login', expired: false });
      }
    : undefined;
  return <Routed pages={props.pages} info={state.info} onLogout={logout} />;
}

function Routed(props: { pages: readonly PageDef[]; info: GatewayInfo; onLogout: (() => void) | undefined }) {
  const route = useRoute();
  const page = props.pages.find((p) => p.path === route.page);
  const first = useRef(true);
  const pageKey = `${route.page}/${route.rest.join('/')}`;

  useEffect(() => {
    document.title = `${page?.title ?? 'Not found'} · Skybridge`;
  }, [page]);

  // A navigation (not the first render) moves focus to the new page's heading, so screen reader and
  // keyboard users start reading where the content changed. Pages render their h1 at once (PageHeader).
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const main = document.getElementById('main');
    const h1 = main?.querySelector('h1');
    const target = (h1 as HTMLElement | null) ?? main;
    if (!target) return;
    if (target !== main) target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: false });
    window.scrollTo(0, 0);
  }, [pageKey]);

  const Page = page?.component;
  return (
    <Layout info={props.info} pages={props.pages} current={route.page} onLogout={props.onLogout}>
      {Page ? (
        <Page key={route.page} rest={route.rest} params={route.params} info={props.info} />
      ) : (
        <>
          <PageHeader title="Page not found" />
          <p>
            There is no page “{route.page}”. <a href="#/overview">Go to the overview</a>.
          </p>
        </>
      )}
    </Layout>
  );
}
