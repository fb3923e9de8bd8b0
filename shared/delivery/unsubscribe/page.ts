import { createHash } from 'node:crypto';

/**
 * The page a GET of an unsubscribe link shows (docs/streams.md): one button that makes the
 * one-click POST, so a link scanner's GET unsubscribes nobody. Self-contained: its style and script
 * are inline and allowed by their hashes alone (no third-party origin, nothing else runs), the POST
 * goes to the page's own URL, and no referrer leaves it (the URL holds the token).
 */
const style =
  'body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}button{font-size:1rem;padding:.6rem 1.2rem;cursor:pointer}';

const script = `document.getElementById('unsubscribe').addEventListener('submit',function(e){e.preventDefault();var s=document.getElementById('state');fetch(location.href,{method:'POST',headers:{'Content-Type':'application/x-www-form-urlencoded'},body:'List-Unsubscribe=One-Click',credentials:'omit'}).then(function(r){s.textContent=r.ok?'You are unsubscribed. You will get no more of these messages.':'This link is not valid.';if(r.ok)document.getElementById('go').disabled=true;},function(){s.textContent='Could not reach the server; try again.';});});`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export const unsubscribePageHeaders: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src ${hash(style)}; script-src ${hash(script)}; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** Without script the form itself posts the same body (the answer is then an empty page). */
export const unsubscribePage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Unsubscribe</title>
<style>${style}</style>
</head>
<body>
<main>
<h1>Unsubscribe</h1>
<p>Stop receiving these messages at this address? Other mail, such as receipts and password resets, still reaches you.</p>
<form id="unsubscribe" method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button id="go" type="submit">Unsubscribe</button>
</form>
<p id="state" role="status"></p>
</main>
<script>${script}</script>
</body>
</html>
`;
