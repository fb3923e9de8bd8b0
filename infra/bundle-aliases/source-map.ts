/**
 * Bundle alias for `source-map` (infra/bundling.ts). Handlebars' code generator requires it only to
 * map compiled templates back to their source when a template is compiled with `srcName`, which the
 * service never does; without it Handlebars uses its own small stand-in, as its browser build always
 * does. No export: Handlebars sees no `SourceNode` and takes its stand-in, and the library (a
 * twentieth of the template functions' start size) is neither bundled nor loaded.
 */
export {};
