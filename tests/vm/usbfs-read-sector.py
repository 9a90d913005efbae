#!/usr/bin/env python3
"""Reads sector 0 of a USB mass-storage device through its usbfs node alone,
as a program in a sandbox given only /dev/bus/usb/BBB/DDD would: claim the
interface, a bulk-only-transport READ(10), and the status. Prints the
sector's first 16 bytes. No kernel driver is involved on this side.

    usbfs-read-sector.py /dev/bus/usb/BBB/DDD
"""
import ctypes
import fcntl
import os
import struct
import sys

# <linux/usbdevice_fs.h>, x86-64: _IOR('U', 15, unsigned int), _IOR('U', 16,
# unsigned int), _IOWR('U', 2, struct usbdevfs_bulktransfer) (24 bytes).
CLAIM_INTERFACE = 0x8004550F
RELEASE_INTERFACE = 0x80045510
BULK = 0xC0185502


def bulk(fd, endpoint, data_or_length, timeout_ms=10000):
    if isinstance(data_or_length, int):
        buffer = ctypes.create_string_buffer(data_or_length)
        length = data_or_length
    else:
        buffer = ctypes.create_string_buffer(data_or_length, len(data_or_length))
        length = len(data_or_length)
    request = struct.pack("IIIxxxxP", endpoint, length, timeout_ms, ctypes.addressof(buffer))
    done = fcntl.ioctl(fd, BULK, bytearray(request))
    return buffer.raw[:done]


def mass_storage_endpoints(descriptors):
    """The interface number and bulk IN/OUT endpoints of class 08 (mass storage)."""
    interface, bulk_in, bulk_out, at = None, None, None, 0
    current_class = None
    while at + 2 <= len(descriptors):
        length, kind = descriptors[at], descriptors[at + 1]
        if length < 2:
            break
        if kind == 4:  # interface
            current_class = descriptors[at + 5]
            if current_class == 8 and interface is None:
                interface = descriptors[at + 2]
        elif kind == 5 and current_class == 8:  # endpoint of that interface
            address, attributes = descriptors[at + 2], descriptors[at + 3]
            if attributes & 3 == 2:
                if address & 0x80:
                    bulk_in = bulk_in or address
                else:
                    bulk_out = bulk_out or address
        at += length
    return interface, bulk_in, bulk_out


def main():
    node = sys.argv[1]
    fd = os.open(node, os.O_RDWR)
    descriptors = os.read(fd, 4096)
    interface, bulk_in, bulk_out = mass_storage_endpoints(descriptors)
    if interface is None or bulk_in is None or bulk_out is None:
        sys.exit(f"{node}: no mass-storage interface with bulk endpoints")
    fcntl.ioctl(fd, CLAIM_INTERFACE, struct.pack("I", interface))
    # Command block wrapper: READ(10) of one 512-byte block at LBA 0, LUN 0.
    read10 = bytes([0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0]).ljust(16, b"\0")
    cbw = struct.pack("<4sIIBBB", b"USBC", 0x636C6F70, 512, 0x80, 0, 10) + read10
    bulk(fd, bulk_out, cbw)
    sector = bulk(fd, bulk_in, 512)
    csw = bulk(fd, bulk_in, 13)
    fcntl.ioctl(fd, RELEASE_INTERFACE, struct.pack("I", interface))
    os.close(fd)
    if len(csw) != 13 or csw[:4] != b"USBS" or csw[12] != 0:
        sys.exit(f"{node}: the command failed (status {csw.hex()})")
    sys.stdout.write(sector[:16].decode("latin-1") + "\n")


if __name__ == "__main__":
    main()
