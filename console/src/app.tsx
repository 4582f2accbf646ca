// The shell: sign-in when there is no session, otherwise the menu and the page the hash names.
import { useEffect, useState } from 'preact/hooks';
import { HOME, PAGES } from './pages';
import { LoginPage } from './pages/login';
import { href, match, navigate, useLocation } from './router';
import { can, setTokens, useSession } from './session';

export function App() {
  const session = useSession();
  const loc = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [loc.path]);
  useEffect(() => {
    if (session && (loc.path === '/' || loc.path === '')) navigate(HOME);
  }, [session, loc.path]);
  if (!session) return <LoginPage />;

  let page = null;
  for (const entry of PAGES) {
    const params = match(entry.pattern, loc.path);
    if (params) {
      page = !entry.permission || can(session, entry.permission)
        ? entry.render(params, loc.params)
        : <p role="alert" class="alert">The {session.role} role cannot open this page: it needs the {entry.permission} permission.</p>;
      break;
    }
  }
  const current = (pattern: string) => loc.path === pattern || loc.path.startsWith(`${pattern}/`);
  return (
    <div class="shell">
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>Skip to content</button>
      <header class="top">
        <a class="brand" href={href(HOME)}>Engine console</a>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>Menu</button>
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Main">
          <ul>
            {PAGES.filter((p) => p.nav && (!p.permission || can(session, p.permission))).map((p) => (
              <li key={p.pattern}><a href={href(p.pattern)} aria-current={current(p.pattern) ? 'page' : undefined}>{p.nav}</a></li>
            ))}
          </ul>
        </nav>
        <div class="user">
          <span class="muted small-text">{session.email} · {session.role}</span>
          <button type="button" class="small" onClick={() => setTokens(null)}>Sign out</button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page ?? <p>No such page. <a href={href(HOME)}>Back to the workflows</a></p>}
      </main>
    </div>
  );
}
