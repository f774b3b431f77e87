"""``ShopEnv`` through other frameworks' doors: Gymnasium, verifiers and an HTTP environment server.

Every door builds its environments and verdicts from one :class:`~shoparena.integrations.tasks.ShopTaskSet`,
so the same problem, policy and seed give the same verdict through each. The framework packages are
imported only by their own modules (``integrations.gym`` needs ``gymnasium``, ``integrations.verifiers_env``
needs ``verifiers``, ``integrations.http`` needs FastAPI).
"""
