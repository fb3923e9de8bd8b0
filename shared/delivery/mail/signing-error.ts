/**
 * The message could not be DKIM-signed: it is never sent unsigned. A module of its own, so that the
 * sender can recognise the failure without loading the signer before its first message.
 */
export class SigningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningError';
  }
}
