"""Where the Ray head stand-in listens: a constant of its own, so the stack can name it without loading the server."""

from planb.local import loopback

#: The stand-in's port on 127.0.0.1 (KubeRay's HTTP_PROXY points here); PLANB_PORT_OFFSET moves it.
PORT = loopback.port(19085)
