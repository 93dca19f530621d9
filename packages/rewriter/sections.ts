/**
 * Section-level access to a WebAssembly module for tools that read or add
 * custom sections (the JS compiler's compilation hints): the section ids, a
 * split of a module into its sections, the byte reader and writer, and the
 * compilation-hints section builder.
 *
 * @module
 */
export { compilationHintsSection } from "./_hints.ts";
export { SECTION, splitSections } from "./decode/_module.ts";
export { Reader } from "./decode/_reader.ts";
export { Writer } from "./encode/_writer.ts";
