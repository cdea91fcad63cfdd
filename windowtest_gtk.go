//go:build e2e

package main

// The window test resizes the window on GTK's main loop: Wails v2.14's
// WindowSetSize calls gtk_window_resize from the goroutine that handles the
// page's message, off GTK's thread, and now and then the window then never
// took another size (seen under Xvfb: 5 s of asking, still 1280×800).
// g_idle_add is safe from any thread; the callback runs on the main loop.

/*
#cgo pkg-config: gtk+-3.0
#include <gtk/gtk.h>

typedef struct { int width, height; } windowtest_size;

static gboolean windowtest_place(gpointer data) {
	windowtest_size *s = data;
	GList *windows = gtk_window_list_toplevels();
	for (GList *w = windows; w != NULL; w = w->next) {
		if (!gtk_widget_get_visible(GTK_WIDGET(w->data))) continue;
		gtk_window_move(GTK_WINDOW(w->data), 0, 0);
		gtk_window_resize(GTK_WINDOW(w->data), s->width, s->height);
	}
	g_list_free(windows);
	g_free(s);
	return G_SOURCE_REMOVE;
}

static void windowtest_place_later(int width, int height) {
	windowtest_size *s = g_new(windowtest_size, 1);
	s->width = width;
	s->height = height;
	g_idle_add(windowtest_place, s);
}
*/
import "C"

// placeWindow puts the window at the display's top left corner at
// width×height, on GTK's main loop (soon after it returns).
func placeWindow(width, height int) {
	C.windowtest_place_later(C.int(width), C.int(height))
}
