"""How the bot is reached: HTTP (a threaded WSGI server) or Socket Mode."""
