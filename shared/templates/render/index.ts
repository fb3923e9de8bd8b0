/**
 * The rendering of a stored template for a message: a public module of its own because the messages
 * wing loads it with `import()` on the first templated message, so that the template engine stays
 * out of every add and batch that names none.
 */
export { renderForMessage } from '../templates.ts';
