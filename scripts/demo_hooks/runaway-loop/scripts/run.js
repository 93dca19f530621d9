// A hook with a bug: it never finishes.
let spins = 0;
while (true) spins++;
