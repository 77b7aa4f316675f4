"""Sample documents the tests serve: an application shell (content drawn by JavaScript), an RSS
feed and an Atom feed."""

from __future__ import annotations

APP_SHELL = (
    '<!doctype html><html><head><title>App</title><script src="/main.js"></script></head>'
    '<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.'
    "</noscript></body></html>"
)
RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Release notes</title>
<item><title>v2.0 released</title><link>https://ex.test/v2</link>
<pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate><description>&lt;p&gt;Big &lt;b&gt;news&lt;/b&gt;&lt;/p&gt;</description></item>
<item><title>v1.9 released</title><link>https://ex.test/v19</link></item></channel></rss>"""
ATOM = b"""<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">
<title>Blog</title><entry><title>Hello Atom</title><link href="https://ex.test/a"/>
<updated>2026-11-01T00:00:00Z</updated><summary>First post</summary></entry></feed>"""
