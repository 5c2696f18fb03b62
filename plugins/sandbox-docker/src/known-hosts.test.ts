import { knownHostKeys, knownHostsName } from './known-hosts';

// Two host keys made by ssh-keygen; the hashed lines are `ssh-keygen -H` of the plain ones
// (OpenSSH 9.2p1), and `ssh-keygen -F build-1` / `-F '[build-2]:2222'` found each of them.
const K1 = 'AAAAC3NzaC1lZDI1NTE5AAAAIE35+QDOOSS/UNsB7m5iIyQPTqf3hw0wZ39s2U7mbmqZ';
const K2 = 'AAAAC3NzaC1lZDI1NTE5AAAAIJiOaTCszVysxzW2qdegH0bIe0mxBfWVuz78ciX5ayT8';
const hashed = [
  `|1|jOFFKZVwF5RhYVyEtlYIoi4qhA0=|CilUc7dM3P4PbmPuUZbbucj5Rds= ssh-ed25519 ${K1}`,
  `|1|iP57a/XmXRdDo2cNEiR7JfcveL4=|N28fx/k6I5wZQQ/e9vkI/83wnP0= ssh-ed25519 ${K2}`,
].join('\n');

describe('known_hosts', () => {
  it('finds plain names, [host]:port for other ports, comma lists and patterns', () => {
    const text = `# a comment\n\nbuild-1,10.0.0.7 ssh-ed25519 ${K1}\n[build-2]:2222 ssh-ed25519 ${K2}\n*.farm.example,!bad.farm.example ssh-ed25519 ${K2}\n`;
    expect(knownHostKeys(text, 'build-1', 22)).toEqual([K1]);
    expect(knownHostKeys(text, '10.0.0.7', 22)).toEqual([K1]);
    expect(knownHostKeys(text, 'build-1', 2222)).toEqual([]); // another port is another host
    expect(knownHostKeys(text, 'build-2', 2222)).toEqual([K2]);
    expect(knownHostKeys(text, 'build-2', 22)).toEqual([]);
    expect(knownHostKeys(text, 'n3.farm.example', 22)).toEqual([K2]);
    expect(knownHostKeys(text, 'bad.farm.example', 22)).toEqual([]);
    expect(knownHostKeys(text, 'build-10', 22)).toEqual([]); // no prefix matches
    expect(knownHostsName('h', 22)).toBe('h');
    expect(knownHostsName('h', 2200)).toBe('[h]:2200');
  });

  it("reads OpenSSH's hashed names", () => {
    expect(knownHostKeys(hashed, 'build-1', 22)).toEqual([K1]);
    expect(knownHostKeys(hashed, 'build-2', 2222)).toEqual([K2]);
    expect(knownHostKeys(hashed, 'build-2', 22)).toEqual([]);
    expect(knownHostKeys(hashed, 'build-3', 22)).toEqual([]);
  });

  it('drops revoked keys and skips cert-authority lines', () => {
    const text = `build-1 ssh-ed25519 ${K1}\nbuild-1 ssh-ed25519 ${K2}\n@revoked * ssh-ed25519 ${K2}\n@cert-authority *.example ssh-ed25519 ${K1}\n`;
    expect(knownHostKeys(text, 'build-1', 22)).toEqual([K1]);
    expect(knownHostKeys(text, 'x.example', 22)).toEqual([]);
  });
});
