/** Where things are inside a `docker` sandbox's container and on its host, and the labels that mark them. */
/** Version of the image recipe in `scripts/docker-image.sh`; part of the image tag. */
export const IMAGE_RECIPE = 2;
/** The image `scripts/docker-image.sh` builds on this machine (its node is the host's). */
export const DEFAULT_IMAGE = `clawgym-sandbox:${IMAGE_RECIPE}-node${process.versions.node}`;
/** What the in-container forwarder prints once it listens: no command runs in the sandbox before. */
export const FORWARDER_READY = 'clawgym-forwarder-listening';
/** Port of the in-container forwarder to the proxy socket (as in the netns sandbox). */
export const SANDBOX_PROXY_PORT = 4141;

export const WORKSPACE = '/workspace';
export const HOME = '/home/agent';

/**
 * When the workspace a task asks for lies below `/root` (ClawGym-Task's
 * `/root/.openclaw/workspace`): `/root` is closed to other users (0700) in Debian-based images
 * and the sandbox's user is not root, so an empty, open folder of the sandbox is bound over it
 * (a tmpfs would not do: runc gives it the mode of the folder it covers). Nothing of the
 * image's `/root` is needed: HOME is {@link HOME}.
 */
export const ROOT_HOME = '/root';
export const underRootHome = (workdir: string) => workdir.startsWith(`${ROOT_HOME}/`);
export const PROXY_SOCKET = '/run/clawgym/proxy.sock';
export const NETNS_RUN = '/opt/clawgym/netns-run.js';
/**
 * The container's main process: the loopback forwarder to the proxy socket, for the whole life
 * of the container (started before the sandbox is handed out, so no command pays for it).
 */
export const FORWARDER_CMD = ['node', '-e', "require('/opt/clawgym/forwarder.js').startForwarder(process.argv[1], Number(process.argv[2])).then(() => console.log(process.argv[3]), (e) => { console.error(String(e)); process.exit(1); })", PROXY_SOCKET, String(SANDBOX_PROXY_PORT), FORWARDER_READY];
/** The main process of a container on a remote host: it only keeps the container up (the forwarder comes over the tunnel's exec). */
export const IDLE_CMD = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];

/** Labels on every container; `sweep` finds leftovers by them. */
export const LABEL_RUN = 'clawgym.run';
export const LABEL_ROLLOUT = 'clawgym.rollout';
export const LABEL_ROOT = 'clawgym.root';
/** The runner that made the container (pid, its start time, host): `sweep` leaves a live owner's containers alone. */
export const LABEL_OWNER = 'clawgym.owner';
export const DIR_PREFIX = 'clawgym-docker-';
export const MARKER = '.clawgym-docker.json';
