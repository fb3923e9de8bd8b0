/**
 * Whether a message is tracked (docs/tracking.md): off by default; the sending domain's default
 * (`tracking` on the domain) turns it on, and the message's own `tracking` overrides either, field
 * by field. Authentication mail (one-time codes, sign-in links, password resets: a message tagged
 * `category: authentication`) takes no domain default: it is tracked only when the message itself
 * asks. EML messages are sent as given and never tracked (asking is refused at add).
 */
export interface TrackingSettings {
  opens: boolean;
  clicks: boolean;
}

export type TrackingRequest = { opens?: boolean; clicks?: boolean };

export const authenticationTag = { name: 'category', value: 'authentication' } as const;

export const isAuthenticationMail = (tags: ReadonlyArray<{ name: string; value: string }>): boolean =>
  tags.some((tag) => tag.name === authenticationTag.name && tag.value === authenticationTag.value);

export function effectiveTracking(message: {
  tracking?: TrackingRequest;
  tags?: ReadonlyArray<{ name: string; value: string }>;
  content_kind: string;
  domainDefault?: TrackingSettings;
}): TrackingSettings {
  if (message.content_kind === 'eml' || message.content_kind === 'text_only')
    return { opens: false, clicks: false };
  const fallback = isAuthenticationMail(message.tags ?? []) ? undefined : message.domainDefault;
  return {
    opens: message.tracking?.opens ?? fallback?.opens ?? false,
    clicks: message.tracking?.clicks ?? fallback?.clicks ?? false,
  };
}

export const isTracked = (settings: TrackingSettings): boolean => settings.opens || settings.clicks;
