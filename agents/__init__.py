"""The shipped bots: one folder per rule book holding ONNX policies, their cards, ladders and
round robins. Data, not code: the package installs the files the bot registry reads as
``greed_env.agents`` (setup.py maps this folder there), and ``greed_env.bots.load`` finds them."""
