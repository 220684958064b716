// Entry point: mounts the shell (login gate, navigation, hash router) on #app.
import { render } from 'preact';
import './styles.css';
import { PAGES } from './pages/registry.ts';
import { App } from './shell/app.tsx';

render(<App pages={PAGES} />, document.getElementById('app')!);
