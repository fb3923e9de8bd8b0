import { type ComponentChild, render } from 'preact';
import { connectApi } from './api.ts';
import { App } from './app.tsx';
import { openSession, SignInError } from './auth.ts';
import { loadConfig } from './config.ts';
import './styles.css';

/**
 * Starts the console: reads config.json, completes or starts the sign-in (a page opened without a
 * session goes to the identity provider by itself), then shows the page the address names.
 */
async function start(root: HTMLElement): Promise<void> {
  // The static "Loading the console" note is not Preact's to keep.
  const show = (content: ComponentChild) => {
    root.replaceChildren();
    render(content, root);
  };
  try {
    const config = await loadConfig();
    const session = await openSession(config);
    connectApi(config.api_url, session);
    show(<App session={session} />);
  } catch (error) {
    show(<StartFailed error={error} />);
  }
}

function StartFailed({ error }: { error: unknown }) {
  const message = error instanceof Error ? error.message : String(error);
  return (
    <main id="main" class="start-failed">
      <h1>The console could not start</h1>
      <p class="notice error" role="alert">
        {message}
      </p>
      {error instanceof SignInError ? (
        <button type="button" class="primary" onClick={error.retry}>
          Sign in again
        </button>
      ) : (
        <button type="button" class="primary" onClick={() => location.reload()}>
          Reload
        </button>
      )}
    </main>
  );
}

void start(document.getElementById('app') as HTMLElement);
