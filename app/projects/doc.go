// Package projects keeps the studio's projects on disk: a script with its
// lines, the cast (a voice per speaker tag), the sampling settings, the takes
// made for each line and the chosen one, and how the scene is exported.
//
// Each project is a directory $XDG_DATA_HOME/proscenium/projects/<name>/
// holding project.json (project.go: the format and its checks; store.go: the
// directory). Files are written atomically. A project.json that cannot be
// read back is never overwritten: it is renamed aside (project.json.corrupt-
// <time>) and the user is told where it went.
//
// The takes themselves stay in the takes store (app); a project lists
// their ids. This package imports nothing of the app.
package projects
