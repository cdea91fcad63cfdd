// Saves bytes through the browser's own download (its save dialog or
// downloads folder): the server never writes the file.
export function saveDownload(name: string, data: Blob, doc: Document = document): void {
  const url = URL.createObjectURL(data);
  const a = doc.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  doc.body.appendChild(a);
  a.click();
  a.remove();
  // The download has started from the URL by now; free it a little later.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
