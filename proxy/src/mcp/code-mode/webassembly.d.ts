// The part of the WebAssembly JS API the code-mode sandbox uses. Node has it globally, but its types
// live in TypeScript's DOM library, which this project does not load.
declare namespace WebAssembly {
  type Bytes = ArrayBuffer | ArrayBufferView;
  interface ModuleImportDescriptor {
    module: string;
    name: string;
    kind: 'function' | 'table' | 'memory' | 'global' | 'tag';
  }
  class Module {
    constructor(bytes: Bytes);
    static imports(module: Module): ModuleImportDescriptor[];
    static exports(module: Module): { name: string; kind: string }[];
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  interface Memory {
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  function compile(bytes: Bytes): Promise<Module>;
}
