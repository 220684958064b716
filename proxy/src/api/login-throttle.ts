// The login throttle is the gateway's guess throttle (governance/guess-throttle.ts): one instance
// counts management logins, management API keys and virtual keys alike.
export { GuessThrottle as LoginThrottle, MAX_FAILURES, WINDOW_MS } from '../governance/guess-throttle.ts';
