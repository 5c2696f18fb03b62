import { limitEnforcementHere } from './limits';

describe('limitEnforcementHere', () => {
  it('says how each limit is enforced from the kernel\'s controllers, and "not enforced" for a missing one', () => {
    const all = limitEnforcementHere({ pids: true, memory: true, cpu: true });
    expect(Object.values(all).some((h) => h.startsWith('not enforced'))).toBe(false);
    const none = limitEnforcementHere({ pids: false, memory: true, cpu: false });
    expect(none.pids).toBe('not enforced: the kernel has no pids cgroup controller');
    expect(none.cpus).toBe('not enforced: the kernel has no cpu cgroup controller');
    expect(none.memory).toBe(all.memory);
    expect(none.wall).toBe(all.wall);
  });
});
