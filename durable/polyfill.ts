// Node 20 lacks Promise.withResolvers (Node 22 has it); the Restate SDK (>= 1.14) calls it without
// declaring an engine. Imported before the SDK by every file of this entry; defined only when missing.

interface WithResolvers {
  withResolvers?: <T>() => {
    promise: Promise<T>;
    resolve: (value: T) => void;
    reject: (reason?: unknown) => void;
  };
}

const PromiseConstructor = Promise as unknown as WithResolvers;
if (typeof PromiseConstructor.withResolvers !== "function") {
  Object.defineProperty(Promise, "withResolvers", {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
