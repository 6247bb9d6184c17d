"""Real servers for tests and benches: ``sshd`` (``ssh.py``), nginx + fcgiwrap in front of
``git http-backend`` with TLS and basic auth (``https.py``), a TCP server that accepts and never answers
(``process.Blackhole``), and network namespaces joined by veth pairs (``netns.py``). ``transport.py``
puts them together: a remote reached over ``path``, ``ssh`` or ``https``, and peers set up for it.

Each server is a context manager that starts it and always stops it; ``Unavailable`` says why one cannot
run on this machine (the pytest fixtures in ``tests/conftest.py`` turn it into a skip with that reason).
Traffic stays on 127.0.0.1 or in namespaces these helpers made.
"""
