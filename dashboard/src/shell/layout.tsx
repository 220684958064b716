// The frame around every page: skip link, header (version, read-only badge, notifications, logout),
// side navigation (a menu button at phone width) and the main region the router fills.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { PageDef } from '../pages/types.ts';
import { BrandMark } from './brand.tsx';
import { Notifications } from './notifications.tsx';
import { NoPasswordHint } from './no-password.tsx';
import { Banner } from '../ui/components.tsx';
import type { GatewayInfo } from '../../../proxy/src/api/answers.ts';

export function Layout(props: { info: GatewayInfo; pages: readonly PageDef[]; current: string; onLogout?: () => void; children: ComponentChildren }) {
  const [menuOpen, setMenuOpen] = useState(false);
  // A navigation closes the phone menu.
  useEffect(() => setMenuOpen(false), [props.current]);
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setMenuOpen(false);
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [menuOpen]);

  return (
    <div class="app">
      <a class="skip-link" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="app-head">
        <button type="button" class="btn menu-button" aria-expanded={menuOpen} aria-controls="app-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <a class="brand" href="#/overview">
          <BrandMark /> <span class="hide-phone">Skybridge</span>
        </a>
        <span class="version">v{props.info.version}</span>
        {props.info.read_only && (
          <span class="badge badge-readonly" title={props.info.read_only_reason}>
            Read-only
          </span>
        )}
        <span class="spacer" />
        <Notifications />
        {props.onLogout && (
          <button type="button" class="btn" onClick={props.onLogout}>
            Log out
          </button>
        )}
      </header>
      <nav id="app-nav" class={`app-nav${menuOpen ? ' open' : ''}`} aria-label="Pages">
        <ul>
          {props.pages.map((p) => (
            <li key={p.path}>
              <a href={`#/${p.path}`} aria-current={p.path === props.current ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="app-main" tabIndex={-1}>
        {(props.info.config_notices ?? []).map((n) => (
          <Banner kind="warning" key={n}>
            <span data-testid="config-notice">{n}</span>
          </Banner>
        ))}
        <NoPasswordHint authEnabled={props.info.auth_enabled} readOnly={props.info.read_only} />
        {props.children}
      </main>
    </div>
  );
}
