import { resolveAvatar } from '#shared/avatars/lookup.ts';
import { avatarGet } from '#shared/avatars/routes.ts';
import { type AvatarGetRequest, avatarGetRequest } from '#shared/avatars/schemas.ts';
import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { formatDate } from '#shared/platform/time/format.ts';

/**
 * GET /avatar/get-1.0?email=…&size=…: a presigned URL of the address's avatar (cache, then Gravatar,
 * then generated initials). Every valid address gets the same answer shape (docs/avatars.md).
 */
export const handler = protectedHandler<AvatarGetRequest>(
  avatarGet,
  { input: { schema: avatarGetRequest, from: 'query' } },
  async ({ input, requestId }) => {
    const avatar = await resolveAvatar(input.email, input.size, requestId);
    return dataResponse({
      email: avatar.email,
      content_type: avatar.contentType,
      url: avatar.url,
      source: avatar.source,
      expires_at: formatDate(avatar.expiresAt),
    });
  },
);
