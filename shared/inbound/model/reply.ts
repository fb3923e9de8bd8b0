import EmailReplyParser from 'email-reply-parser';

/**
 * `stripped_text_reply`: what the sender wrote in a reply, without the quoted message, the
 * "On … wrote:" line and the signature. The parsing is email-reply-parser's (Crisp's maintained
 * port of GitHub's EmailReplyParser: quote headers of Gmail, Outlook, Apple Mail, Thunderbird and
 * others in a dozen languages, `>` quotes, `-- ` signatures, "Sent from my iPhone").
 *
 * Its patterns backtrack quadratically on long lines (`On .+ .+ wrote:`), so a few long lines take
 * seconds. A reply sits at the top of the text, so only the first 16 KB are
 * given to it (cut at a line end), which keeps a hostile message from stalling the function.
 */
export const replyParseLimit = 16 * 1024;

export function strippedTextReply(text: string): string {
  let head = text.replace(/\r\n?/g, '\n');
  if (head.length > replyParseLimit) {
    const cut = head.lastIndexOf('\n', replyParseLimit);
    head = head.slice(0, cut > 0 ? cut : replyParseLimit);
  }
  return new EmailReplyParser().parseReply(head).trim();
}
