import { useState } from 'preact/hooks';
import { hasRemoteImages, previewDocument } from './preview-document.ts';

/**
 * An HTML preview: an `about:srcdoc` frame sandboxed without `allow-scripts` (links may open in a
 * new tab, outside the sandbox), under the preview's own policy (preview-document.ts). Remote
 * images stay blocked until the user asks.
 */
export function HtmlPreview({ html, title }: { html: string; title: string }) {
  const [remote, setRemote] = useState(false);
  const remoteContent = hasRemoteImages(html);
  return (
    <div class="preview">
      {remoteContent ? (
        <p class="muted preview-bar">
          {remote ? (
            'Remote images are shown: their servers learn that this message was opened.'
          ) : (
            <>
              Remote images are blocked.{' '}
              <button type="button" class="small" onClick={() => setRemote(true)}>
                Load remote images
              </button>
            </>
          )}
        </p>
      ) : null}
      <iframe
        title={title}
        sandbox="allow-popups allow-popups-to-escape-sandbox"
        srcdoc={previewDocument(html, remote)}
        referrerpolicy="no-referrer"
      />
    </div>
  );
}
