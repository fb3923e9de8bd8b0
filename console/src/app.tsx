import type { Session } from './auth.ts';
import { AsyncView } from './components.tsx';
import { ActivityPage } from './pages/activity.tsx';
import { ApiKeysPage } from './pages/apikeys.tsx';
import { DomainsPage } from './pages/domains.tsx';
import { MessagePage } from './pages/message.tsx';
import { SuppressionsPage } from './pages/suppressions.tsx';
import { TemplatesPage } from './pages/templates.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { href, type Route, useRoute } from './router.ts';
import { useAsync } from './use-async.ts';

/** The pages of the navigation, in order; each needs the scope named here to be of any use. */
const sections = [
  { page: 'activity', label: 'Activity', scope: 'messages:read' },
  { page: 'domains', label: 'Domains', scope: 'domains:read' },
  { page: 'suppressions', label: 'Suppressions', scope: 'suppressions:read' },
  { page: 'webhooks', label: 'Webhooks', scope: 'webhooks:read' },
  { page: 'templates', label: 'Templates', scope: 'templates:read' },
  { page: 'dashboard', label: 'Dashboard', scope: 'messages:read' },
  { page: 'apikeys', label: 'API keys', scope: 'keys:read' },
] as const;

/** The Dashboard and its chart library (uPlot) load when first opened: the other pages never wait for them. */
function Dashboard({ route }: { route: Route }) {
  const [page, retry] = useAsync(() => import('./pages/dashboard.tsx'), []);
  return (
    <AsyncView value={page} loading="Loading the dashboard" onRetry={retry}>
      {({ DashboardPage }) => <DashboardPage route={route} />}
    </AsyncView>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'activity':
      return <ActivityPage route={route} />;
    case 'message':
      return route.id === undefined ? <ActivityPage route={route} /> : <MessagePage uuid={route.id} />;
    case 'domains':
      return <DomainsPage domain={route.query.get('domain') ?? undefined} />;
    case 'suppressions':
      return <SuppressionsPage route={route} />;
    case 'webhooks':
      return <WebhooksPage id={route.id} />;
    case 'templates':
      return <TemplatesPage route={route} />;
    case 'dashboard':
      return <Dashboard route={route} />;
    case 'apikeys':
      return <ApiKeysPage />;
    default:
      return (
        <>
          <h1>Page not found</h1>
          <p>
            There is no page <code>{route.page}</code>: go to <a href={href('activity')}>Activity</a>.
          </p>
        </>
      );
  }
}

export function App({ session }: { session: Session }) {
  const route = useRoute();
  const current = route.page === 'message' ? 'activity' : route.page;
  const missing = sections.find((section) => section.page === current && !session.scopes.has(section.scope));
  return (
    <>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <span class="brand">svc-mail</span>
        <nav aria-label="Main">
          <ul>
            {sections.map((section) => (
              <li key={section.page}>
                <a href={href(section.page)} aria-current={section.page === current ? 'page' : undefined}>
                  {section.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="account">
          <span class="visually-hidden">Signed in as </span>
          {session.account ?? 'no account named in the token'}
          <button type="button" class="small" onClick={() => session.signOut()}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {missing === undefined ? null : (
          <p class="notice" role="note">
            Your sign-in lacks the scope <code>{missing.scope}</code>: this page answers 113 until you sign in
            with it.
          </p>
        )}
        <Page key={`${route.page}/${route.id ?? ''}`} route={route} />
      </main>
    </>
  );
}
