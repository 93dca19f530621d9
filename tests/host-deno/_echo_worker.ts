/** A worker that answers each message with the same message (worker_start_test.ts). */
self.onmessage = (event: MessageEvent) => self.postMessage(event.data);
