/**
 * Where the fields of other providers' send APIs (Resend's `html`/`text`/`scheduled_at`,
 * Postmark's `HtmlBody`/`TextBody`/`From`/`To`/…) go in a message of this API, so a body written
 * for one of them is answered with the change to make, not only "Unknown field".
 */
const contentExample = (kind: 'text_only' | 'html_only', field: 'text' | 'html') =>
  `content: {"kind":"${kind}","${field}":…}`;

function bodyHint(field: 'text' | 'html', hasOther: boolean): string {
  if (hasOther) return 'text and html go together in content: {"kind":"mixed","text":…,"html":…}';
  return field === 'html'
    ? `the HTML body goes in ${contentExample('html_only', 'html')}`
    : `the text body goes in ${contentExample('text_only', 'text')}`;
}

const renamed: Record<string, string> = {
  From: 'from (a list, or one address)',
  To: 'to (a list, or one address)',
  Cc: 'cc (a list, or one address)',
  Bcc: 'bcc (a list, or one address)',
  ReplyTo: 'reply_to',
  Subject: 'subject',
  Headers: 'headers (an object of name → value)',
  Tag: 'tags: [{"name":…,"value":…}]',
  Metadata: 'metadata',
  Attachments: 'attachments: [{"filename":…,"content_type":…,"content":<base64>}]',
  replyTo: 'reply_to',
  reply_to_addresses: 'reply_to',
  scheduled_at: 'scheduling: {"mode":"scheduled","send_at":<ISO 8601 with an offset>}',
  send_at: 'scheduling: {"mode":"scheduled","send_at":<ISO 8601 with an offset>}',
  body: `content: {"kind":"text_only","text":…} or {"kind":"html_only","html":…}`,
  template_id: 'template: {"alias":…,"model":{…}}',
  TemplateId: 'template: {"alias":…,"model":{…}}',
  TemplateAlias: 'template: {"alias":…,"model":{…}}',
  TemplateModel: 'template: {"alias":…,"model":{…}}',
};

/** The advice for an unknown top-level field of a message body, if it is one of another API's. */
export function foreignFieldHint(field: string, body: Record<string, unknown>): string | undefined {
  if (field === 'html' || field === 'HtmlBody')
    return bodyHint('html', body.text !== undefined || body.TextBody !== undefined);
  if (field === 'text' || field === 'TextBody')
    return bodyHint('text', body.html !== undefined || body.HtmlBody !== undefined);
  const target = renamed[field];
  return target === undefined ? undefined : `use ${target}`;
}
