import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type AvatarGetRequest, avatarGetRequest } from '#shared/schemas/avatars.ts';
import { resolveAvatar } from '#shared/services/avatars.ts';
import { formatDate } from '#shared/time/format.ts';

/**
 * GET /avatar/get-1.0?email=…&size=…: a presigned URL of the address's avatar (cache, then Gravatar,
 * then generated initials). Every valid address gets the same answer shape (docs/avatars.md).
 */
export const handler = protectedHandler<AvatarGetRequest>(
  'avatar-get',
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
