/**
 * `@clawgym/sandbox-docker/testing`: what the plugin's tests, the e2e tests and the benches use to
 * run Docker where none is set up: a private `dockerd` of their own (its own data root and
 * socket, stopped by its PID), network namespaces reached over a veth, an sshd in one, and the
 * sandbox image built on that daemon. Not part of the plugin's API.
 */
export {
  buildSandboxImage, dockerdMissing, makeTestNetns, netnsMissing, pingDocker, sshdMissing, sshKeygen, startDockerd, startTestSshd,
  type PrivateDockerd, type StartDockerdOptions, type TestNetns, type TestSshd,
} from './dockerd';
